// Package hostconn is the host's end of its connection to a plugin
// process: the go-plugin handshake and plugin set the host starts a
// plugin with, a Conn that runs calls on the plugin in the seam's
// friendly types (sdk/seam), the call lane beside it, and the Host
// interface the host implements to serve a plugin's requests. The plugin
// protocol itself (pluginv1, the lane's frames) stays inside the SDK
// module; the host sees only this package and sdk/seam
// (docs/decisions.md D34).
package hostconn
