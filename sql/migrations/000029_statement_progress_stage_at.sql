-- When a running statement's pipeline entered its current stage (progress_stage): the statement
-- record shows it as progress.since, so a run stuck in a stage shows how long it has been there.
ALTER TABLE statements ADD COLUMN progress_stage_at timestamptz;
