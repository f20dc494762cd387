-- The portal's create-token form carries a single-use id (portalsec): the
-- token minted from it records the id, so a resubmitted form (a reload of
-- the answer showing the value) cannot mint a second token. NULL for
-- tokens minted otherwise (the portal command line).
ALTER TABLE api_tokens ADD COLUMN mint_form_id text UNIQUE;
