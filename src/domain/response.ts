export type ParticipantRow = {
  id: string;
  /** Time-sorted internal key for paging. */
  seq: string;
  pollId: string;
  accountId: string;
  metadata: Record<string, unknown>;
  synthetic: boolean;
  complete: boolean;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** What the stored answers hold as JSON (MAX_RESPONDENT_BYTES), when a submission counted them anew. */
  answerBytes?: number;
};

export type ResponseRow = {
  id: string;
  accountId: string;
  pollId: string;
  participantId: string;
  slideId: string;
  value: unknown;
  metadata: Record<string, unknown>;
  synthetic: boolean;
  createdAt: Date;
};
