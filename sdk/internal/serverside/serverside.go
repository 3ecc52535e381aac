// Package serverside hands the SDK's own packages the side of a plugin
// that only the host's calls drive: configure, invoke a tool, deliver an
// event, report health, list and read resources and prompts, complete,
// stop. Those are not methods of *sdk.Plugin, so a plugin author sees only
// what an author calls; package sdk registers the adapter here at init and
// package sdktest reaches it, in process, for plugins' tests.
//
// The adapter crosses this package as an any: this package cannot name
// the SDK's types (package sdk imports it), so its reader asserts it to
// the interface of the methods it uses, and sdktest's tests call each one.
package serverside

// of returns the adapter of an *sdk.Plugin.
var of func(plugin any) any

// Register sets the function that returns a plugin's adapter; package sdk
// calls it once, from its init.
func Register(f func(plugin any) any) { of = f }

// Of returns the adapter of plugin, an *sdk.Plugin.
func Of(plugin any) any { return of(plugin) }
