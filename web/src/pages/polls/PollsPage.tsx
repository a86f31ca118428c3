import { useState } from 'react';
import { useLoad } from '../../ui/hooks';
import { useSession } from '../../ui/session';
import { PollCreate } from './PollCreate';
import { PollList } from './PollList';
import './polls.css';

export function PollsPage() {
  const { api, account } = useSession();
  const [version, setVersion] = useState(0);
  // The account's polls quota, and how much of it it uses.
  const usage = useLoad(
    () => api.get('/account/usage', { accountId: account.accountId }),
    `${account.accountId}:${version}`,
  );
  return (
    <>
      <h1>Polls</h1>
      {usage.data && (
        <p data-testid="poll-usage">
          {usage.data.data.polls.used} of {usage.data.data.polls.quota} polls this account may hold.
        </p>
      )}
      <PollList key={version} />
      {account.role !== 'read_only' && <PollCreate onCreated={() => setVersion((v) => v + 1)} />}
    </>
  );
}
