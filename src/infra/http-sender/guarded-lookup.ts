import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { isPublicAddress } from '../../domain/ip-ranges.js';

export class BlockedAddressError extends Error {
  readonly code = 'CANVASS_BLOCKED_ADDRESS';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to ${address}, which is not a public address`);
  }
}

type Resolver = (hostname: string, options: LookupOptions & { all: true }) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname, options) => dns.promises.lookup(hostname, options);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves the name once and refuses non-public answers.
 * The socket connects to exactly the address checked here, so a name that resolves to a
 * public address for a check and a private one for the connection (rebinding) cannot slip by.
 */
export function guardedLookup(opts: { allowPrivate: boolean; resolver?: Resolver }) {
  const resolve = opts.resolver ?? systemResolver;
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }).then(
      (addresses) => {
        const usable = opts.allowPrivate ? addresses : addresses.filter((a) => isPublicAddress(a.address));
        if (!usable.length) {
          callback(
            new BlockedAddressError(hostname, addresses[0]?.address ?? 'nothing') as NodeJS.ErrnoException,
            '',
            0,
          );
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
