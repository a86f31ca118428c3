-- A submission inserts its respondent's row and, once the answers are listed, updates that same
-- row (completion, metadata) in the same transaction. With full pages about a third of those
-- updates found no room on the row's page and so wrote a new entry in all four indexes; with
-- 30% of each page left free they stay on the page (HOT) and touch no index. Measured on the
-- api bench: about 5% less database CPU per submission.
ALTER TABLE participants SET (fillfactor = 70);
