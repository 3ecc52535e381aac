package sdk

// ToolValue is a declared tool whatever its input and output types: every
// Tool[In, Out] is one. It lets a plugin build each tool in a function of
// its own and register the lot in one list (AddTools), although the tools'
// types differ.
type ToolValue interface {
	// addTo declares the tool on p; unexported so that only Tool[In, Out]
	// values are tools.
	addTo(p *Plugin)
}

// addTo declares t on p as AddTool does.
func (t Tool[In, Out]) addTo(p *Plugin) { AddTool(p, t) }

// AddTools declares tools on p in order, each as AddTool does (and with
// its panics on a declaration error).
func AddTools(p *Plugin, tools ...ToolValue) {
	for _, t := range tools {
		t.addTo(p)
	}
}
