// Package ldaptest starts a real OpenLDAP server (Debian's slapd) for tests: its own
// configuration, a TLS certificate of a throwaway CA, an mdb database under the
// test's directory and a free port, seeded with the users and groups a test names.
// Tests skip when slapd is not installed.
package ldaptest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
)

// Base is the suffix of the test directory.
const Base = "dc=example,dc=org"

// Users and groups live under these.
const (
	PeopleBase = "ou=people," + Base
	GroupsBase = "ou=groups," + Base
	// BindDN and BindPassword are the searching account.
	BindDN       = "cn=reader," + Base
	BindPassword = "reader-secret"
	// rootDN and rootPassword are the directory's manager, which SetMembers binds as.
	rootDN       = "cn=root," + Base
	rootPassword = "root-secret"
)

// User is a person entry (inetOrgPerson, uid=<UID>).
type User struct {
	UID, Password string
}

// Group is a groupOfNames whose members are users by uid.
type Group struct {
	CN      string
	Members []string
}

// DN of a user.
func (u User) DN() string { return "uid=" + u.UID + "," + PeopleBase }

// GroupDN is the DN of a group by common name.
func GroupDN(cn string) string { return "cn=" + cn + "," + GroupsBase }

// Server is a running slapd.
type Server struct {
	// URL is ldap://127.0.0.1:<port> (StartTLS offered).
	URL string
	// CAFile is the PEM of the CA that signed the server's certificate.
	CAFile string
	// CAPEM is the same certificate.
	CAPEM []byte
}

// Start runs slapd with users and groups until the test ends; it skips the test when
// slapd is not installed.
func Start(t testing.TB, users []User, groups []Group) *Server {
	t.Helper()
	slapd := "/usr/sbin/slapd"
	if _, err := os.Stat(slapd); err != nil {
		if p, err := exec.LookPath("slapd"); err == nil {
			slapd = p
		} else {
			ci.Skip(t, "slapd is not installed (apt-get install slapd)")
		}
	}
	slapadd := filepath.Join(filepath.Dir(slapd), "slapadd")
	if _, err := os.Stat(slapadd); err != nil {
		ci.Skip(t, "slapadd is not installed (apt-get install slapd)")
	}
	dir := t.TempDir()
	caPEM := writeCerts(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	schemaDir := "/etc/ldap/schema"
	conf := fmt.Sprintf(`include %[2]s/core.schema
include %[2]s/cosine.schema
include %[2]s/inetorgperson.schema
pidfile %[1]s/slapd.pid
argsfile %[1]s/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCACertificateFile %[1]s/ca.pem
TLSCertificateFile %[1]s/server.pem
TLSCertificateKeyFile %[1]s/server.key
database mdb
suffix "%[3]s"
rootdn "%[5]s"
rootpw %[6]s
directory %[1]s/db
maxsize 10485760
security tls=1
access to attrs=userPassword by self read by anonymous auth by * none
access to * by dn.exact="%[4]s" read by self read by * none
`, dir, schemaDir, Base, BindDN, rootDN, rootPassword)
	confPath := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(dir, "seed.ldif")
	if err := os.WriteFile(seed, []byte(ldif(users, groups)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(slapadd, "-f", confPath, "-l", seed).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v\n%s", err, out)
	}
	port := freePort(t)
	url := "ldap://127.0.0.1:" + strconv.Itoa(port)
	// -d keeps slapd in the foreground; "stats" logs the line that says it listens.
	cmd := exec.Command(slapd, "-f", confPath, "-h", url+"/", "-d", "stats")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("slapd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var tail []string
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "slapd starting") {
				ready <- nil
				for sc.Scan() {
				}
				return
			}
			tail = append(tail, line)
		}
		ready <- fmt.Errorf("slapd ended before it listened:\n%s", strings.Join(tail, "\n"))
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("slapd did not start in 30 s")
	}
	return &Server{URL: url, CAFile: filepath.Join(dir, "ca.pem"), CAPEM: caPEM}
}

// SetMembers replaces the members of a group (by uid), as the directory's
// administrator would; an empty list leaves the group with nobody who signs in.
func (s *Server) SetMembers(t testing.TB, cn string, members []string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	conn, err := ldap.DialURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.StartTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Bind(rootDN, rootPassword); err != nil {
		t.Fatal(err)
	}
	dns := []string{rootDN}
	if len(members) > 0 {
		dns = dns[:0]
		for _, m := range members {
			dns = append(dns, User{UID: m}.DN())
		}
	}
	req := ldap.NewModifyRequest(GroupDN(cn), nil)
	req.Replace("member", dns)
	if err := conn.Modify(req); err != nil {
		t.Fatalf("set members of %s: %v", cn, err)
	}
}

func ldif(users []User, groups []Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n", Base)
	fmt.Fprintf(&b, "dn: %s\nobjectClass: organizationalUnit\nou: people\n\n", PeopleBase)
	fmt.Fprintf(&b, "dn: %s\nobjectClass: organizationalUnit\nou: groups\n\n", GroupsBase)
	fmt.Fprintf(&b, "dn: %s\nobjectClass: person\ncn: reader\nsn: reader\nuserPassword: %s\n\n", BindDN, BindPassword)
	for _, u := range users {
		fmt.Fprintf(&b, "dn: %s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nuserPassword: %s\n\n", u.DN(), u.UID, u.UID, u.UID, u.Password)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "dn: %s\nobjectClass: groupOfNames\ncn: %s\n", GroupDN(g.CN), g.CN)
		members := g.Members
		if len(members) == 0 {
			// groupOfNames needs a member; the root DN is nobody who signs in.
			b.WriteString("member: " + rootDN + "\n")
		}
		for _, m := range members {
			fmt.Fprintf(&b, "member: %s\n", User{UID: m}.DN())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeCerts makes a CA and a server certificate for 127.0.0.1 and localhost and
// returns the CA's PEM.
func writeCerts(t testing.TB, dir string) []byte {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ldaptest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.pem", caPEM)
	write("server.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	write("server.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return caPEM
}
