package zktest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"

	"github.com/go-zookeeper/zk"
)

// ExpireSession ends conn's session on the server, as an expiry does:
// another connection joins the session with its id and password and
// closes it (the client library does not expose the password: it is read
// from the connection by reflection). conn then learns on reconnecting
// that its session expired.
func ExpireSession(addr string, conn *zk.Conn) error {
	passwd := reflect.ValueOf(conn).Elem().FieldByName("passwd").Bytes()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd, readOnly.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, 30000)
	req = binary.BigEndian.AppendUint64(req, uint64(conn.SessionID()))
	req = binary.BigEndian.AppendUint32(req, uint32(len(passwd)))
	req = append(req, passwd...)
	req = append(req, 0)
	if err := writeFrame(c, req); err != nil {
		return err
	}
	resp, err := readFrame(c)
	if err != nil {
		return err
	}
	if len(resp) < 8 || int32(binary.BigEndian.Uint32(resp[4:8])) <= 0 {
		return fmt.Errorf("zktest: session %#x already expired", conn.SessionID())
	}
	// closeSession: xid 1, type -11.
	closeReq := binary.BigEndian.AppendUint32(nil, 1)
	closeReq = binary.BigEndian.AppendUint32(closeReq, uint32(0xfffffff5))
	if err := writeFrame(c, closeReq); err != nil {
		return err
	}
	_, err = readFrame(c)
	return err
}

func writeFrame(w io.Writer, b []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}
