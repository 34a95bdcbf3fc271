//go:build !amd64

package tensor

// q40PanelTile is Q4_0PanelTileFunc: no level of this architecture reads Q4_0 panels.
func q40PanelTile() PanelTileFunc { return nil }
