import { DomainError } from '../../domain/errors.js';
import { isIpLiteral, isPublicAddress } from '../../domain/ip-ranges.js';
import { checkLogicSize, savedUrls, type Action, type Condition } from '../../domain/logic.js';
import { checkEndpointUrl, checkLogicUrl } from '../../domain/url-policy.js';
import type { Deps } from '../ports/index.js';

/**
 * A webhook or logic URL at save time: the syntactic policy, then, for a name, what it resolves
 * to now. A name that does not resolve yet is accepted (it is checked again on the address each
 * delivery connects to); one that resolves to a non-public address is refused here.
 */
export async function checkTargetUrl(
  deps: Deps,
  raw: string,
  path: string,
  check: typeof checkEndpointUrl = checkEndpointUrl,
): Promise<string> {
  const url = check(raw, deps.urlPolicy, path);
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (deps.urlPolicy.allowPrivateTargets || !deps.resolveHost || isIpLiteral(host)) return url;
  const addresses = await deps.resolveHost(host).catch(() => [] as string[]);
  const bad = addresses.find((a) => !isPublicAddress(a));
  // The address itself is not told: it would map the service's internal names for anyone
  // who may save a URL.
  if (bad) {
    throw new DomainError(
      'invalid_url',
      `${path} must be a public https:// URL: ${host} resolves to a non-public address`,
      [{ path, message: 'resolves to a non-public address' }],
    );
  }
  return url;
}

type Rule = { action: Action; conditions?: readonly Condition[] };

/**
 * Every trigger-webhook URL in a list of rules but those already `saved` in the list it replaces
 * (see checkRules). Rules over the logic size bounds are refused first, before any lookup. The
 * names are looked up at once, each name once, so that a name server that does not answer costs
 * one wait rather than one per rule; the refusal is the first rule's that fails.
 */
export async function checkRuleTargets(
  deps: Deps,
  rules: readonly Rule[],
  basePath: string,
  saved: readonly Rule[] = [],
): Promise<void> {
  checkLogicSize(rules, saved, basePath);
  const kept = savedUrls(saved);
  const lookups = new Map<string, Promise<string[]>>();
  const resolveHost = deps.resolveHost;
  const once: Deps = {
    ...deps,
    ...(resolveHost && {
      resolveHost: (host: string) => lookups.get(host) ?? lookups.set(host, resolveHost(host)).get(host)!,
    }),
  };
  const targets = rules.flatMap((r, i) =>
    r.action.type === 'trigger-webhook' && !kept.has(r.action.url)
      ? [{ url: r.action.url, path: `${basePath}/${i}/action/url` }]
      : [],
  );
  // Every URL's form first, so that one refused for it answers before any lookup is waited for.
  for (const t of targets) checkLogicUrl(t.url, deps.urlPolicy, t.path);
  const checked = await Promise.allSettled(targets.map((t) => checkTargetUrl(once, t.url, t.path, checkLogicUrl)));
  const refused = checked.find((c) => c.status === 'rejected');
  if (refused) throw refused.reason;
}
