import path from 'node:path';
import { pathToFileURL } from 'node:url';
// The service's code as it ships (dist/, npm run build), not as tsx compiles it here: tsx keeps
// function names by wrapping every closure the code makes, a cost per delivery the service never
// pays (docs/performance.md).
import { openDatabase } from '../dist/infra/db/database.js';
import { createStore } from '../dist/infra/db/store.js';
import { createH1Sender } from '../dist/infra/http-sender/h1-sender.js';
import { startDeliveryRunner } from '../dist/worker/delivery-runner.js';

/**
 * The parts of a build of canvass that the bench runs in its own process (the delivery and
 * paced sections): this checkout's dist/, or another checkout's for an A/B (BENCH_AB_DIST).
 */
export type Build = {
  name: string;
  openDatabase: typeof openDatabase;
  createStore: typeof createStore;
  createH1Sender: typeof createH1Sender;
  startDeliveryRunner: typeof startDeliveryRunner;
};

export const thisBuild: Build = { name: 'this build', openDatabase, createStore, createH1Sender, startDeliveryRunner };

/** Another build's dist/ directory (built there with `npm run build`), loaded beside this one. */
export async function loadBuild(dist: string): Promise<Build> {
  const load = async <T>(file: string, name: string): Promise<T> => {
    const mod = (await import(pathToFileURL(path.join(path.resolve(dist), file)).href)) as Record<string, unknown>;
    if (typeof mod[name] !== 'function') throw new Error(`${dist}/${file} has no ${name}(): is it a build of canvass?`);
    return mod[name] as T;
  };
  return {
    name: path.resolve(dist),
    openDatabase: await load<typeof openDatabase>('infra/db/database.js', 'openDatabase'),
    createStore: await load<typeof createStore>('infra/db/store.js', 'createStore'),
    createH1Sender: await load<typeof createH1Sender>('infra/http-sender/h1-sender.js', 'createH1Sender'),
    startDeliveryRunner: await load<typeof startDeliveryRunner>('worker/delivery-runner.js', 'startDeliveryRunner'),
  };
}
