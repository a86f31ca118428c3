/** node-postgres's conversion of a parameter to its text form (embedded-wire.ts). */
declare module 'pg/lib/utils.js' {
  export function prepareValue(value: unknown): unknown;
}
