-- Least-privilege roles for a team's lore record (docs/team.md). Run once as the owner after
-- `lore-sidecar shared init` has created the tables (the owner runs the migrations).
-- Change the passwords.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'lore_writer') THEN
    CREATE ROLE lore_writer LOGIN PASSWORD 'CHANGE-ME-writer';
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'lore_reader') THEN
    CREATE ROLE lore_reader LOGIN PASSWORD 'CHANGE-ME-reader';
  END IF;
END $$;
GRANT CONNECT ON DATABASE lore TO lore_writer, lore_reader;
GRANT USAGE ON SCHEMA public TO lore_writer, lore_reader;
-- Writers append operations and keep the arbitration table; they never rewrite the log.
GRANT SELECT, INSERT ON lore_ops TO lore_writer;
GRANT USAGE ON SEQUENCE lore_ops_seq_seq TO lore_writer;
GRANT SELECT, INSERT, UPDATE, DELETE ON lore_nodes TO lore_writer;
GRANT SELECT ON lore_schema TO lore_writer, lore_reader;
-- Readers replay the log into their own stores; any write they try is refused by PostgreSQL.
GRANT SELECT ON lore_ops, lore_nodes TO lore_reader;
