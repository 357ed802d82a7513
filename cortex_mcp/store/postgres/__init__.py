"""The PostgreSQL store (CORTEX_DATABASE_URL): the same store classes over a shared database.

Imported only when the setting asks for it; the driver comes with the `postgres` extra."""
