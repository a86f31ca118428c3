import { useState } from 'react';
import { ErrorNote } from '../../ui/components';
import { useSession } from '../../ui/session';
import { useAccountUsage } from '../../ui/usage';
import { PollCreate } from './PollCreate';
import { PollList } from './PollList';
import './polls.css';

export function PollsPage() {
  const { account } = useSession();
  const [version, setVersion] = useState(0);
  // The account's polls quota, and how much of it it uses.
  const usage = useAccountUsage(version);
  return (
    <>
      <h1>Polls</h1>
      {usage.figures && (
        <p data-testid="poll-usage">
          {usage.figures.polls.used} of {usage.figures.polls.quota} polls this account may hold.
        </p>
      )}
      <ErrorNote>{usage.error}</ErrorNote>
      <PollList key={version} />
      {account.role !== 'read_only' && <PollCreate onCreated={() => setVersion((v) => v + 1)} />}
    </>
  );
}
