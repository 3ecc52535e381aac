package seam

// Config is what the host configures a plugin with at its start.
type Config struct {
	// Root is the workspace root (CAIRN_ROOT or the host's working dir).
	Root string
	// DataDir is where the plugin keeps its stores.
	DataDir string
	// Mode is FULL, READONLY, TEST or MINIMAL.
	Mode string
	// HostVersion is the cairn host version.
	HostVersion string
	// Settings are the plugin's settings from the host config file.
	Settings map[string]string
}

// Configured is a plugin's answer to its configuration: the call lane it
// offers (a socket path; empty: none), and whether that lane takes event
// batches.
type Configured struct {
	CallLane         string
	LaneEventBatches bool
}
