package computer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Keysym is an X11 keysym.
type Keysym uint32

// namedKeysyms are the X keysym names (as xdotool and the computer-use tool
// spell them) of keys that are not a single printable character.
var namedKeysyms = map[string]Keysym{
	"BackSpace": 0xff08, "Tab": 0xff09, "Linefeed": 0xff0a, "Clear": 0xff0b, "Return": 0xff0d,
	"Pause": 0xff13, "Scroll_Lock": 0xff14, "Sys_Req": 0xff15, "Escape": 0xff1b, "Delete": 0xffff,
	"Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53, "Down": 0xff54,
	"Prior": 0xff55, "Page_Up": 0xff55, "Next": 0xff56, "Page_Down": 0xff56, "End": 0xff57, "Begin": 0xff58,
	"Select": 0xff60, "Print": 0xff61, "Execute": 0xff62, "Insert": 0xff63, "Undo": 0xff65, "Redo": 0xff66,
	"Menu": 0xff67, "Find": 0xff68, "Cancel": 0xff69, "Help": 0xff6a, "Break": 0xff6b, "Num_Lock": 0xff7f,
	"KP_Space": 0xff80, "KP_Tab": 0xff89, "KP_Enter": 0xff8d, "KP_Home": 0xff95, "KP_Left": 0xff96,
	"KP_Up": 0xff97, "KP_Right": 0xff98, "KP_Down": 0xff99, "KP_Page_Up": 0xff9a, "KP_Page_Down": 0xff9b,
	"KP_End": 0xff9c, "KP_Begin": 0xff9d, "KP_Insert": 0xff9e, "KP_Delete": 0xff9f, "KP_Equal": 0xffbd,
	"KP_Multiply": 0xffaa, "KP_Add": 0xffab, "KP_Separator": 0xffac, "KP_Subtract": 0xffad,
	"KP_Decimal": 0xffae, "KP_Divide": 0xffaf,
	"KP_0": 0xffb0, "KP_1": 0xffb1, "KP_2": 0xffb2, "KP_3": 0xffb3, "KP_4": 0xffb4,
	"KP_5": 0xffb5, "KP_6": 0xffb6, "KP_7": 0xffb7, "KP_8": 0xffb8, "KP_9": 0xffb9,
	"Shift_L": 0xffe1, "Shift_R": 0xffe2, "Control_L": 0xffe3, "Control_R": 0xffe4, "Caps_Lock": 0xffe5,
	"Shift_Lock": 0xffe6, "Meta_L": 0xffe7, "Meta_R": 0xffe8, "Alt_L": 0xffe9, "Alt_R": 0xffea,
	"Super_L": 0xffeb, "Super_R": 0xffec, "Hyper_L": 0xffed, "Hyper_R": 0xffee, "ISO_Level3_Shift": 0xfe03,
	"space": 0x20, "exclam": 0x21, "quotedbl": 0x22, "numbersign": 0x23, "dollar": 0x24, "percent": 0x25,
	"ampersand": 0x26, "apostrophe": 0x27, "quoteright": 0x27, "parenleft": 0x28, "parenright": 0x29,
	"asterisk": 0x2a, "plus": 0x2b, "comma": 0x2c, "minus": 0x2d, "period": 0x2e, "slash": 0x2f,
	"colon": 0x3a, "semicolon": 0x3b, "less": 0x3c, "equal": 0x3d, "greater": 0x3e, "question": 0x3f,
	"at": 0x40, "bracketleft": 0x5b, "backslash": 0x5c, "bracketright": 0x5d, "asciicircum": 0x5e,
	"underscore": 0x5f, "grave": 0x60, "quoteleft": 0x60, "braceleft": 0x7b, "bar": 0x7c,
	"braceright": 0x7d, "asciitilde": 0x7e,
	"XF86AudioMute": 0x1008ff12, "XF86AudioLowerVolume": 0x1008ff11, "XF86AudioRaiseVolume": 0x1008ff13,
	"XF86AudioPlay": 0x1008ff14, "XF86AudioStop": 0x1008ff15, "XF86AudioPrev": 0x1008ff16,
	"XF86AudioNext": 0x1008ff17, "XF86Back": 0x1008ff26, "XF86Forward": 0x1008ff27,
	"XF86Refresh": 0x1008ff29, "XF86Search": 0x1008ff1b, "XF86HomePage": 0x1008ff18,
}

// keyAliases are xdotool's modifier aliases plus spellings models often
// use; the lookup is case-insensitive for these.
var keyAliases = map[string]string{
	"ctrl": "Control_L", "control": "Control_L", "alt": "Alt_L", "shift": "Shift_L",
	"super": "Super_L", "meta": "Meta_L", "win": "Super_L", "windows": "Super_L", "cmd": "Super_L",
	"command": "Super_L", "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape",
	"del": "Delete", "delete": "Delete", "backspace": "BackSpace", "tab": "Tab", "pgup": "Page_Up",
	"pageup": "Page_Up", "page_up": "Page_Up", "pgdn": "Page_Down", "pagedown": "Page_Down", "page_down": "Page_Down",
	"home": "Home", "end": "End", "insert": "Insert", "ins": "Insert", "up": "Up", "down": "Down",
	"left": "Left", "right": "Right", "space": "space", "spacebar": "space", "menu": "Menu",
	"print": "Print", "printscreen": "Print", "capslock": "Caps_Lock", "caps_lock": "Caps_Lock",
}

func init() {
	// F1..F35 are consecutive from 0xffbe.
	for i := 1; i <= 35; i++ {
		namedKeysyms[fmt.Sprintf("F%d", i)] = Keysym(0xffbe + i - 1)
	}
}

// MaxKeySpecLength bounds a key action's text.
const MaxKeySpecLength = 256

// KeysymForRune returns the keysym typing r produces: Latin-1 characters
// are their code point, newline and tab their keys, everything else the
// Unicode keysym range (0x01000000 + code point).
func KeysymForRune(r rune) (Keysym, bool) {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d, true
	case r == '\t':
		return 0xff09, true
	case r == '\b':
		return 0xff08, true
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError:
		return 0, false
	case r < 0x100:
		return Keysym(r), true
	case r > 0x10ffff:
		return 0, false
	}
	return Keysym(0x01000000 + r), true
}

// KeysymByName resolves one key name: an X keysym name ("Return",
// "Page_Down", "F5", "KP_Enter"), an alias ("ctrl", "super", "enter"), a
// single character ("a", "A", "é", "1"), or a hex keysym ("0xff0d").
func KeysymByName(name string) (Keysym, bool) {
	if ks, ok := namedKeysyms[name]; ok {
		return ks, true
	}
	if a, ok := keyAliases[strings.ToLower(name)]; ok {
		return namedKeysyms[a], true
	}
	if utf8.RuneCountInString(name) == 1 {
		r, _ := utf8.DecodeRuneInString(name)
		return KeysymForRune(r)
	}
	if strings.HasPrefix(name, "0x") && len(name) > 2 && len(name) <= 10 {
		var v uint32
		if _, err := fmt.Sscanf(name, "0x%x", &v); err == nil && v != 0 {
			return Keysym(v), true
		}
	}
	// Case-insensitive match of a keysym name ("pause", "f5").
	for n, ks := range namedKeysyms {
		if strings.EqualFold(n, name) {
			return ks, true
		}
	}
	return 0, false
}

// KeyChord is keys pressed together, in order, and released in reverse.
type KeyChord []Keysym

// ParseKeySpec parses xdotool key syntax: chords joined with "+"
// ("ctrl+shift+t"), several chords separated by spaces ("ctrl+a Delete").
func ParseKeySpec(spec string) ([]KeyChord, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errs.Invalid("key", "minLength", "key must name at least one key, such as Return or ctrl+c")
	}
	if len(spec) > MaxKeySpecLength {
		return nil, errs.Invalidf("key", "maxLength", "key is longer than %d characters; use the type action for text", MaxKeySpecLength)
	}
	var out []KeyChord
	for _, chord := range strings.Fields(spec) {
		var c KeyChord
		var parts []string
		switch {
		case chord == "+":
			parts = []string{"+"}
		case strings.HasSuffix(chord, "++"):
			// "ctrl++" is ctrl and the plus key.
			parts = append(strings.Split(strings.TrimSuffix(chord, "++"), "+"), "+")
		default:
			parts = strings.Split(chord, "+")
		}
		for _, p := range parts {
			if p == "" {
				return nil, errs.Invalidf("key", "format", "key %q has an empty part; join keys with + such as ctrl+c", chord)
			}
			ks, ok := KeysymByName(p)
			if !ok {
				return nil, errs.Invalidf("key", "keysym", "unknown key %q: use xdotool names such as Return, Escape, BackSpace, Tab, Up, Page_Down, F1, ctrl, alt, shift, super, or a single character", p)
			}
			c = append(c, ks)
		}
		if len(c) > 8 {
			return nil, errs.Invalidf("key", "maxItems", "chord %q presses more than 8 keys at once", chord)
		}
		out = append(out, c)
	}
	if len(out) > 32 {
		return nil, errs.Invalid("key", "maxItems", "at most 32 chords per key action")
	}
	return out, nil
}
