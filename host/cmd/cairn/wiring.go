package main

import (
	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/host/cli"
	"github.com/cairn-mcp/cairn/host/config"
)

// newHost builds a host for the commands: the root package wires it, and
// the commands get its parts (cli never imports the root).
func newHost(s config.Settings, log hclog.Logger) (*cli.Host, error) {
	h, err := host.New(s, host.Options{Version: host.Version, Logger: log})
	if err != nil {
		return nil, err
	}
	return &cli.Host{Lifecycle: h, Server: h.Server, Fleet: h.Fleet, Catalog: h.Catalog, System: h.System, Bus: h.Bus, Settings: s}, nil
}
