package opconfig

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrInsecureCredentials: the credentials file is readable by group or others.
var ErrInsecureCredentials = errors.New("credentials file is readable by other users")

// CredentialsPath is home/credentials.
func CredentialsPath(home string) string { return filepath.Join(home, "credentials") }

// ReadCredentials parses the INI-like credentials file: [server] sections
// with `token = value`. A missing file is empty.
func ReadCredentials(home string) (map[string]string, error) {
	path := CredentialsPath(home)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o; run `chmod 600 %s`", ErrInsecureCredentials, path, st.Mode().Perm(), path)
	}
	out := map[string]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				return nil, fmt.Errorf("credentials %s line %d: want `token = VALUE` inside a [server] section", path, n)
			}
			if strings.TrimSpace(k) == "token" {
				out[section] = strings.TrimSpace(v)
			}
		}
	}
	return out, sc.Err()
}

// WriteCredentials replaces the credentials file (0600, temp + rename).
func WriteCredentials(home string, creds map[string]string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	names := make([]string, 0, len(creds))
	for n := range creds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "[%s]\ntoken = %s\n\n", n, creds[n])
	}
	tmp, err := os.CreateTemp(home, ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), CredentialsPath(home))
}
