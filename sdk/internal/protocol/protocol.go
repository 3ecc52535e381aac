// Package protocol is the thin layer between go-plugin and the cairn plugin
// protocol: the handshake, the versioned plugin sets and the gRPC message
// limits shared by the host's end (sdk/hostconn) and the plugin's (package
// sdk). It is internal to the SDK module: the host and plugins see only
// sdk/seam's types (docs/decisions.md D34).
package protocol

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// Version is the newest plugin protocol version this module speaks.
const Version = 1

// PluginKey is the key of the cairn plugin inside a go-plugin plugin set.
const PluginKey = "cairn"

// MaxMessageBytes raises gRPC's 4 MB default on both sides so large tool
// results (screenshots, big listings) pass.
const MaxMessageBytes = 256 << 20

// Handshake is the go-plugin handshake. The cookie only stops a plugin binary
// from being run by hand by mistake; it is not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  Version,
	MagicCookieKey:   "CAIRN_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "0f9d2c4e8b1a7d3e-cairn-plugin",
}

// ServerOptions are the gRPC server options used on both ends of every
// connection (the plugin's server and the host's broker-served services).
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.InitialWindowSize(flowWindow),
		grpc.InitialConnWindowSize(flowWindow),
	}
}

// flowWindow is a fixed HTTP/2 flow-control window. Setting one turns off
// gRPC's bandwidth-delay probing, which otherwise sends a PING (and gets
// one back) around data frames: extra writes and wake-ups on every call
// over a local socket where there is no bandwidth to discover.
const flowWindow = 4 << 20

// DialOptions are the gRPC dial options matching ServerOptions.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(flowWindow),
		grpc.WithInitialConnWindowSize(flowWindow),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageBytes),
			grpc.MaxCallSendMsgSize(MaxMessageBytes),
		),
	}
}

// NewGRPCServer is a go-plugin GRPCServer factory with raised limits.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts, ServerOptions()...)...)
}

// GRPCPluginV1 implements plugin.GRPCPlugin for protocol version 1. The
// plugin process sets NewServer; the host sets Host.
type GRPCPluginV1 struct {
	plugin.NetRPCUnsupportedPlugin

	// NewServer builds the plugin's implementation; it receives the broker so
	// the plugin can dial the host services later.
	NewServer func(broker *plugin.GRPCBroker) pluginv1.PluginServer

	// Host is the host-services implementation served to this plugin.
	Host pluginv1.HostServer
}

// GRPCServer registers the plugin service (plugin side).
func (p *GRPCPluginV1) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServer(s, p.NewServer(broker))
	return nil
}

// ClientV1 is the host's handle on a v1 plugin.
type ClientV1 struct {
	pluginv1.PluginClient
	// HostServiceID is the broker id where the host services are served; it
	// goes into ConfigureRequest.
	HostServiceID uint32
}

// GRPCClient starts the host services on the broker and returns the client
// (host side).
func (p *GRPCPluginV1) GRPCClient(_ context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (interface{}, error) {
	id := broker.NextId()
	go broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := NewGRPCServer(opts)
		if p.Host != nil {
			pluginv1.RegisterHostServer(s, p.Host)
		}
		return s
	})
	return &ClientV1{PluginClient: pluginv1.NewPluginClient(conn), HostServiceID: id}, nil
}
