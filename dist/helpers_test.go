package dist

import "os"

func osWriteFile(p, body string) error { return os.WriteFile(p, []byte(body), 0o644) }
