import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';

/** A request object: unknown top-level fields are an error, not silently ignored. */
export const Strict = <T extends TProperties>(props: T, opts: { description?: string } = {}): TObject<T> =>
  Type.Object(props, { ...opts, additionalProperties: Type.Never() as unknown as boolean });

/** A settings object: unknown keys are dropped (DESIGN §2 sanitising). */
export const Lenient = <T extends TProperties>(props: T, opts: { description?: string } = {}): TObject<T> =>
  Type.Object(props, { ...opts, additionalProperties: false });

/** An object keyed by a pattern; keys that do not match are an error. */
export const Keyed = <T extends TSchema>(pattern: string, value: T, maxProperties: number) =>
  Type.Unsafe<Record<string, T['static']>>({
    type: 'object',
    patternProperties: { [pattern]: value },
    additionalProperties: { not: {} },
    maxProperties,
  });

export const Id = (prefix: string) =>
  Type.String({ pattern: `^${prefix}_[0-9A-Za-z]{22}$`, description: `a ${prefix}_ id` });
export const AnyId = Type.String({ minLength: 1, maxLength: 100 });

export const PageQuery = {
  startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
};

export const Color = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', description: '#rgb or #rrggbb' });
export const ShortText = (max = 200) => Type.String({ maxLength: max });
export const HttpsUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'a public https:// URL' });
export const Email = Type.String({ format: 'email', maxLength: 320 });
export const DateTime = Type.String({ format: 'date-time' });

export const Literals = <T extends string>(...values: T[]) => Type.Union(values.map((v) => Type.Literal(v)));
