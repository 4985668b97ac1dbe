-- The orders every run starts from (the seed job runs it after the migration).
INSERT INTO orders (sku, quantity) VALUES ('book', 1), ('lamp', 2);
