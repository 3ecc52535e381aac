package heldstores

// DataFiles exposes dataFiles to the external test of its names.
var DataFiles = dataFiles
