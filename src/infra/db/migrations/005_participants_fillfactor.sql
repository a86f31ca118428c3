-- A submission inserts its respondent's row and, once the answers are listed, updates that same
-- row (completion, metadata) in the same transaction. With full pages many of those updates
-- find no room on the row's page and so write a new entry in all four indexes; with 30% of each
-- page left free they stay on the page (HOT) and touch no index (docs/performance.md).
ALTER TABLE participants SET (fillfactor = 70);
