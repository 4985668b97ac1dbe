-- The orders every run starts from. The seed job runs it after the migration, and again before
-- each run on a kept environment (the db's `reset`), so it empties the table first.
TRUNCATE orders RESTART IDENTITY;
INSERT INTO orders (sku, quantity) VALUES ('book', 1), ('lamp', 2);
