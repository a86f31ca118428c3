import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';

describe('CANVASS_ENDPOINT_CONNECTIONS: connections to one endpoint origin from all workers together', () => {
  it('is 32 unless set, and takes a whole number from 1 to 1,024', () => {
    expect(loadConfig({}).endpointConnections).toBe(32);
    expect(loadConfig({ CANVASS_ENDPOINT_CONNECTIONS: ' 8 ' }).endpointConnections).toBe(8);
    expect(loadConfig({ CANVASS_ENDPOINT_CONNECTIONS: '1024' }).endpointConnections).toBe(1024);
  });

  it('refuses none, too many, and what is not a whole number, naming the variable', () => {
    for (const bad of ['0', '1025', 'many', '-4', '2.5'])
      expect(() => loadConfig({ CANVASS_ENDPOINT_CONNECTIONS: bad })).toThrow(
        expect.objectContaining({ name: 'ConfigError', variable: 'CANVASS_ENDPOINT_CONNECTIONS' }) as Error,
      );
  });
});
