-- The schema of the orders service (the migration job runs it once the database answers).
CREATE TABLE IF NOT EXISTS orders (
    id       SERIAL PRIMARY KEY,
    sku      TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0)
);
