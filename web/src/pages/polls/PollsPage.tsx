import { useState } from 'react';
import { useSession } from '../../ui/session';
import { PollCreate } from './PollCreate';
import { PollList } from './PollList';
import './polls.css';

export function PollsPage() {
  const { account } = useSession();
  const [version, setVersion] = useState(0);
  return (
    <>
      <h1>Polls</h1>
      <PollList key={version} />
      {account.role !== 'read_only' && <PollCreate onCreated={() => setVersion((v) => v + 1)} />}
    </>
  );
}
