import { describe, expect, it } from 'vitest';
import { webhookTarget } from '../../web/src/ui/roles.js';

// How the dashboard words a Trigger webhook action's URL: a role that sees it masked is told who
// sees it in full.

describe('webhookTarget', () => {
  it.each(['editor', 'read_only'])('tells the %s role who sees the full URL', (role) => {
    expect(webhookTarget('https://hooks.example.com/***', role)).toBe(
      'https://hooks.example.com/*** (owners, admins and billing admins see the full URL)',
    );
  });

  it.each(['owner', 'admin', 'billing_admin'])('shows the URL as it is to the %s role', (role) => {
    expect(webhookTarget('https://hooks.example.com/in', role)).toBe('https://hooks.example.com/in');
  });
});
