export interface Clock {
  now(): Date;
}

export type Page<T> = { data: T[]; hasNextPage: boolean; endCursor: string | null };

export type PageRequest = { startCursor?: string | undefined; limit: number };
