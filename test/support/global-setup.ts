/** Removes databases left behind by a run that was killed before its files could drop their own. */
export default async function setup(): Promise<void> {
  const url = process.env.CANVASS_TEST_PG_URL;
  if (!url) return;
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const old = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'canvass_test_%' AND datname < $1",
      [`canvass_test_${Date.now() - 3_600_000}`],
    );
    for (const { datname } of old.rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
