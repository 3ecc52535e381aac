package convert

import pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"

// The protocol's messages that carry nothing: requests that only name
// their RPC, and answers that only say it succeeded. They are built here
// too, so that no other package builds a protocol message.

// DescribeRequestToProto asks a plugin to describe itself.
func DescribeRequestToProto() *pb.DescribeRequest { return &pb.DescribeRequest{} }

// ListPromptsRequestToProto asks a plugin for its prompts.
func ListPromptsRequestToProto() *pb.ListPromptsRequest { return &pb.ListPromptsRequest{} }

// ListResourcesRequestToProto asks a plugin for its resources.
func ListResourcesRequestToProto() *pb.ListResourcesRequest { return &pb.ListResourcesRequest{} }

// HealthRequestToProto asks a plugin for its health.
func HealthRequestToProto() *pb.HealthRequest { return &pb.HealthRequest{} }

// StopRequestToProto asks a plugin to release its resources.
func StopRequestToProto() *pb.StopRequest { return &pb.StopRequest{} }

// StoppedToProto is a plugin's answer to Stop.
func StoppedToProto() *pb.StopResponse { return &pb.StopResponse{} }

// EventHandledToProto is a plugin's answer to HandleEvent.
func EventHandledToProto() *pb.HandleEventResponse { return &pb.HandleEventResponse{} }
