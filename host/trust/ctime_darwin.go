package trust

import "syscall"

// ctimeNs is the file's status-change time; Darwin names the field
// Ctimespec. The release builds cairn for macOS (docs/deploy.md, Releases).
func ctimeNs(st *syscall.Stat_t) int64 { return st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec }
