package sdk

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// exeResidentKB sums the resident pages of this executable's mappings.
func exeResidentKB(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	defer f.Close()
	var total int64
	ours := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") {
			ours = len(fields) >= 6 && fields[5] == exe
			continue
		}
		if ours && len(fields) >= 2 && fields[0] == "Rss:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			total += kb
		}
	}
	return total
}

// TestTrimIdleMemoryDropsCodePagesAndKeepsWorking: after the trim fewer
// pages of the executable are resident, and the process still runs code,
// reads its data and calls through the dynamic linker's tables.
func TestTrimIdleMemoryDropsCodePagesAndKeepsWorking(t *testing.T) {
	// Touch a good part of the binary first.
	for i := 0; i < 3; i++ {
		_, _ = json.Marshal(map[string]any{"a": []int{1, 2, 3}, "b": "x"})
		_, _ = net.LookupHost("localhost")
	}
	before := exeResidentKB(t)
	trimIdleMemory()
	after := exeResidentKB(t)
	if after >= before {
		t.Fatalf("resident executable pages %d kB before the trim, %d kB after", before, after)
	}
	raw, err := json.Marshal(map[string]any{"still": "works"})
	if err != nil || string(raw) != `{"still":"works"}` {
		t.Fatalf("after the trim: %s %v", raw, err)
	}
	if _, err := net.LookupHost("localhost"); err != nil {
		t.Fatalf("resolver after the trim: %v", err)
	}
	if _, err := os.Hostname(); err != nil {
		t.Fatal(err)
	}
}
