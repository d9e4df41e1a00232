package main

import (
	"context"
	"flag"
	"fmt"
)

// runMigrate applies every API's migrations to the configured store and
// exits; serve does the same at start.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	var store storeConfig
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	store.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	db, err := store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	for _, m := range modules() {
		if err := m.migrate(ctx, db); err != nil {
			return fmt.Errorf("%s: migrate: %w", m.name(), err)
		}
	}
	fmt.Fprintln(io.out, `{"migrated":true}`)
	return nil
}
