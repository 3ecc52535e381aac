package trust

import "syscall"

// ctimeNs is the file's status-change time; Linux names the field Ctim.
func ctimeNs(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }
