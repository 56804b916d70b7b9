package trigger

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// MaxPacketBytes bounds one MQTT packet from the broker. paho reads a whole packet into memory (the protocol
// allows 256 MiB), so the connection itself refuses a packet announcing more: the connection is dropped and
// paho reconnects; the broker should be told the same bound (mosquitto's message_size_limit).
const MaxPacketBytes = HardPayloadMax + 64<<10

// dialBounded opens the broker connection (tcp:// or ssl://) wrapped in a packetLimit.
func dialBounded(max int) paho.OpenConnectionFunc {
	return func(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
		d := &net.Dialer{Timeout: o.ConnectTimeout}
		var c net.Conn
		var err error
		switch u.Scheme {
		case "tcp":
			c, err = d.Dial("tcp", u.Host)
		case "ssl":
			cfg := o.TLSConfig
			if cfg == nil {
				cfg = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			c, err = tls.DialWithDialer(d, "tcp", u.Host, cfg)
		default:
			return nil, fmt.Errorf("mqtt: unsupported scheme %q", u.Scheme)
		}
		if err != nil {
			return nil, err
		}
		return &packetLimit{Conn: c, max: max}, nil
	}
}

// packetLimit follows the MQTT fixed headers of what it reads (a type byte, the remaining length as a
// variable-length integer, the body) and fails the read of a packet whose remaining length is over max.
type packetLimit struct {
	net.Conn
	max int

	state   int // 0: type byte next, 1: in the length, 2: in the body
	length  int // remaining length being decoded
	shift   uint
	lenSeen int // length bytes read (at most 4)
	body    int // body bytes left
}

func (p *packetLimit) Read(b []byte) (int, error) {
	n, err := p.Conn.Read(b)
	for i := 0; i < n; {
		switch p.state {
		case 0:
			p.state, p.length, p.shift, p.lenSeen = 1, 0, 0, 0
			i++
		case 1:
			c := b[i]
			i++
			p.lenSeen++
			p.length |= int(c&0x7f) << p.shift
			p.shift += 7
			if p.length > p.max || p.lenSeen > 4 {
				_ = p.Conn.SetDeadline(time.Now())
				_ = p.Conn.Close()
				return 0, fmt.Errorf("mqtt: the broker sent a packet of more than %d bytes; connection dropped", p.max)
			}
			if c&0x80 == 0 {
				p.body = p.length
				p.state = 2
				if p.body == 0 {
					p.state = 0
				}
			}
		case 2:
			k := min(p.body, n-i)
			p.body -= k
			i += k
			if p.body == 0 {
				p.state = 0
			}
		}
	}
	return n, err
}

// BoundedDialer is the broker dialer of an MQTT source for another client of the same broker (the chat
// adapter, internal/channel/mqtt): packets over max bytes are refused by the connection itself.
func BoundedDialer(max int) paho.OpenConnectionFunc { return dialBounded(max) }

// BrokerURL turns a channels.mqtt broker_url (mqtt:// or mqtts://, agreeing with use_tls) into paho's form.
func BrokerURL(c config.MQTTConfig) (string, error) { return brokerURL(c) }
