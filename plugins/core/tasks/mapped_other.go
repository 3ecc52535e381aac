//go:build !linux

package tasks

import bolt "go.etcd.io/bbolt"

// releaseMapped does nothing where dropping a mapping's pages is not
// wired: the store's pages it read stay resident until it remaps them.
func releaseMapped(*bolt.DB) {}
