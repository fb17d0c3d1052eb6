package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY returns a new pseudo-terminal's two ends: what a terminal
// emulator holds, and the terminal a program sees.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var n uint32
	conn, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ioctlErr error
	if err := conn.Control(func(fd uintptr) {
		var unlock int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
			ioctlErr = e
			return
		}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
			ioctlErr = e
		}
	}); err != nil || ioctlErr != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v %v", err, ioctlErr)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// termios returns f's terminal settings.
func termios(t *testing.T, f *os.File) syscall.Termios {
	t.Helper()
	var tio syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); e != 0 {
		t.Fatal(e)
	}
	return tio
}

// On a real terminal (a pseudo-terminal), the line editor puts it in raw
// mode while a line is read, edits the line, and leaves the terminal as
// it found it when Ctrl-D or Ctrl-C ends the chat.
func TestLineEditorOnAPTY(t *testing.T) {
	t.Run("Ctrl-D", func(t *testing.T) { testLineEditorOnAPTY(t, "\x04") })
	t.Run("Ctrl-C", func(t *testing.T) { testLineEditorOnAPTY(t, "\x03") })
}

func testLineEditorOnAPTY(t *testing.T, leave string) {
	master, slave := openPTY(t)
	before := termios(t, slave)
	if before.Lflag&syscall.ICANON == 0 {
		t.Fatal("a new pseudo-terminal is already raw")
	}
	entered := make(chan syscall.Termios, 2) // the settings each time raw mode is entered
	raw := rawMode(slave)
	opts := options{clock: fixedClock, term: slave, raw: func() (func(), error) {
		restore, err := raw()
		entered <- termios(t, slave)
		return restore, err
	}}
	screen := make(chan string, 1)
	go func() { // what the editor draws, until the test closes the terminal
		b, _ := io.ReadAll(master)
		screen <- string(b)
	}()
	out, done := make(chan string, 1), make(chan error, 1)
	go func() {
		var b bytes.Buffer
		err := run(t.Context(), opts, nil, &b)
		out <- b.String()
		done <- err
	}()
	wait := func(what string, c <-chan syscall.Termios) syscall.Termios {
		t.Helper()
		select {
		case tio := <-c:
			return tio
		case <-time.After(time.Minute): // a hang guard
			t.Fatalf("no %s", what)
			return syscall.Termios{}
		}
	}
	if tio := wait("raw mode for the first line", entered); tio.Lflag&(syscall.ICANON|syscall.ECHO) != 0 {
		t.Errorf("the terminal is not raw while a line is read: lflag %#x", tio.Lflag)
	}
	const left, right = "\x1b[D", "\x1b[C"
	if _, err := io.WriteString(master, "what is 2"+left+"1"+right+"+3\r"); err != nil {
		t.Fatal(err)
	}
	wait("raw mode for the second line", entered)
	if _, err := io.WriteString(master, leave); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatalf("%q did not end the chat", leave)
	}
	if got := <-out; !strings.Contains(got, `→ calculate {"expression":"12+3"}`) || !strings.Contains(got, "12+3 = 15") {
		t.Errorf("output:\n%s", got)
	}
	if after := termios(t, slave); after != before {
		t.Errorf("the terminal's settings after the chat:\n%+v\nwant\n%+v", after, before)
	}
	slave.Close()
	master.Close()
	if s := <-screen; !strings.Contains(s, "you> ") {
		t.Errorf("the editor drew %q", s)
	}
}
