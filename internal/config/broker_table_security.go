package config

import "github.com/twmb/franz-go/pkg/kmsg"

// Kafka's security keys (SSL, SASL, delegation tokens, dynamic password
// encoding, ZooKeeper TLS). Samsa serves PLAINTEXT only until the security
// issue: they load and describe with Kafka's types, defaults and update
// modes, and do nothing.

func tClass(name, dflt, doc string) key       { return mk(name, kmsg.ConfigTypeClass, dflt, nil, doc) }
func tPass(name, doc string) key              { return mk(name, kmsg.ConfigTypePassword, none, nil, doc) }
func perBrokerKey(k key) key                  { return k.kafka(perBroker) }
func clusterKey(k key) key                    { return k.kafka(clusterWide) }
func perBrokerStr(name, dflt, doc string) key { return perBrokerKey(tStr(name, dflt, nil, doc)) }

// acceptedNoEffect is accepted for keys Samsa does not act on at all; their
// documentation says so.
func acceptedNoEffect(keys ...key) []setting {
	for i := range keys {
		keys[i].doc += " Samsa: accepted, no effect."
	}
	return accepted(keys...)
}

var sslKeys = acceptedNoEffect(
	perBrokerKey(tList("ssl.cipher.suites", "", nil, "Cipher suites allowed for TLS connections; empty allows every suite available.")),
	perBrokerKey(tStr("ssl.client.auth", "none", oneOf("required", "requested", "none"), "Whether the broker requests or requires client certificates.")),
	perBrokerKey(tList("ssl.enabled.protocols", "TLSv1.2", nil, "TLS protocol versions enabled for connections.")),
	perBrokerKey(tPass("ssl.key.password", "Password of the private key in the key store or of the PEM key.")),
	perBrokerStr("ssl.keymanager.algorithm", "SunX509", "Key manager factory algorithm for TLS connections."),
	perBrokerKey(tPass("ssl.keystore.certificate.chain", "Certificate chain, in the format of ssl.keystore.type (PEM).")),
	perBrokerKey(tPass("ssl.keystore.key", "Private key, in the format of ssl.keystore.type (PEM, PKCS#8).")),
	perBrokerStr("ssl.keystore.location", none, "Location of the key store file."),
	perBrokerKey(tPass("ssl.keystore.password", "Store password of the key store file.")),
	perBrokerStr("ssl.keystore.type", "JKS", "File format of the key store (JKS, PKCS12, PEM)."),
	perBrokerStr("ssl.protocol", "TLSv1.2", "TLS protocol used to build the SSLContext."),
	perBrokerStr("ssl.provider", none, "Name of the security provider used for TLS connections."),
	perBrokerStr("ssl.trustmanager.algorithm", "PKIX", "Trust manager factory algorithm for TLS connections."),
	perBrokerKey(tPass("ssl.truststore.certificates", "Trusted certificates, in the format of ssl.truststore.type (PEM).")),
	perBrokerStr("ssl.truststore.location", none, "Location of the trust store file."),
	perBrokerKey(tPass("ssl.truststore.password", "Password of the trust store file.")),
	perBrokerStr("ssl.truststore.type", "JKS", "File format of the trust store (JKS, PKCS12, PEM)."),
	tBool("ssl.allow.dn.changes", "false", "Whether a dynamically reconfigured certificate may change its distinguished name."),
	tBool("ssl.allow.san.changes", "false", "Whether a dynamically reconfigured certificate may change its subject alternative names."),
	perBrokerStr("ssl.endpoint.identification.algorithm", "https", "Algorithm validating the server host name against its certificate."),
	perBrokerKey(tClass("ssl.engine.factory.class", none, "SslEngineFactory implementation providing SSLEngine objects.")),
	tStr("ssl.principal.mapping.rules", "DEFAULT", nil, "Rules mapping a client certificate's distinguished name to a short principal name."),
	perBrokerStr("ssl.secure.random.implementation", none, "SecureRandom implementation for TLS cryptography."),
	perBrokerKey(tClass("principal.builder.class", "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
		"KafkaPrincipalBuilder implementation building the principal used for authorization.")),
	tStr("security.providers", none, nil, "Creator classes of providers of security algorithms."),
)

var saslKeys = acceptedNoEffect(
	tClass("sasl.client.callback.handler.class", none, "SASL client callback handler class."),
	perBrokerKey(tList("sasl.enabled.mechanisms", "GSSAPI", nil, "SASL mechanisms enabled on the server.")),
	perBrokerKey(tPass("sasl.jaas.config", "JAAS login context parameters for SASL connections, prefixed with listener and mechanism on brokers.")),
	perBrokerStr("sasl.kerberos.kinit.cmd", "/usr/bin/kinit", "Path of the Kerberos kinit command."),
	perBrokerKey(tLong("sasl.kerberos.min.time.before.relogin", "60000", nil, "Login thread sleep time between refresh attempts.")),
	perBrokerKey(tList("sasl.kerberos.principal.to.local.rules", "DEFAULT", nil, "Rules mapping Kerberos principal names to short names.")),
	perBrokerStr("sasl.kerberos.service.name", none, "Kerberos principal name the broker runs as."),
	perBrokerKey(tDouble("sasl.kerberos.ticket.renew.jitter", "0.05", nil, "Random jitter added to the Kerberos ticket renewal time.")),
	perBrokerKey(tDouble("sasl.kerberos.ticket.renew.window.factor", "0.8", nil, "Fraction of the ticket lifetime after which renewal is attempted.")),
	tClass("sasl.login.callback.handler.class", none, "SASL login callback handler class."),
	tClass("sasl.login.class", none, "Login implementation class."),
	perBrokerKey(tShort("sasl.login.refresh.buffer.seconds", "300", nil, "Buffer kept before credential expiry when refreshing (OAUTHBEARER).")),
	perBrokerKey(tShort("sasl.login.refresh.min.period.seconds", "60", nil, "Minimum wait before refreshing a credential (OAUTHBEARER).")),
	perBrokerKey(tDouble("sasl.login.refresh.window.factor", "0.8", nil, "Fraction of the credential lifetime after which it is refreshed (OAUTHBEARER).")),
	perBrokerKey(tDouble("sasl.login.refresh.window.jitter", "0.05", nil, "Random jitter added to the refresh time (OAUTHBEARER).")),
	perBrokerStr("sasl.mechanism.inter.broker.protocol", "GSSAPI", "SASL mechanism used between brokers."),
	tStr("sasl.oauthbearer.jwks.endpoint.url", none, nil, "URL of the OAuth/OIDC provider's JSON Web Key Set."),
	tStr("sasl.oauthbearer.token.endpoint.url", none, nil, "URL of the OAuth/OIDC token endpoint, or a file holding a token."),
	tClass("sasl.server.callback.handler.class", none, "SASL server callback handler class."),
	tInt("sasl.server.max.receive.size", "524288", nil, "Largest receive allowed before and during SASL authentication."),
	msInt("sasl.login.connect.timeout.ms", none, nil, "Connect timeout to the external authentication provider (OAUTHBEARER)."),
	msInt("sasl.login.read.timeout.ms", none, nil, "Read timeout from the external authentication provider (OAUTHBEARER)."),
	ms("sasl.login.retry.backoff.max.ms", "10000", nil, "Maximum wait between login attempts (OAUTHBEARER)."),
	ms("sasl.login.retry.backoff.ms", "100", nil, "Initial wait between login attempts (OAUTHBEARER)."),
	tInt("sasl.oauthbearer.clock.skew.seconds", "30", nil, "Allowed clock difference with the OAuth/OIDC provider."),
	tList("sasl.oauthbearer.expected.audience", none, nil, "Audiences a JWT must have been issued for."),
	tStr("sasl.oauthbearer.expected.issuer", none, nil, "Issuer a JWT must have been created by."),
	ms("sasl.oauthbearer.jwks.endpoint.refresh.ms", "3600000", nil, "Interval between JWKS cache refreshes."),
	ms("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "10000", nil, "Maximum wait between JWKS retrieval attempts."),
	ms("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "100", nil, "Initial wait between JWKS retrieval attempts."),
	tStr("sasl.oauthbearer.scope.claim.name", "scope", nil, "Name of the JWT claim holding the scope."),
	tStr("sasl.oauthbearer.sub.claim.name", "sub", nil, "Name of the JWT claim holding the subject."),
	ms("connections.max.reauth.ms", "0", nil, "Session lifetime communicated to clients that must re-authenticate; 0: none."),
	msInt("connection.failed.authentication.delay.ms", "100", atLeast(0), "Delay before closing a connection whose authentication failed."),
	tStr("authorizer.class.name", "", nil, "Authorizer implementation used by the broker; empty: none."),
	ms("delegation.token.expiry.time.ms", "86400000", atLeast(1), "Validity of a delegation token before it must be renewed."),
	tPass("delegation.token.master.key", "Deprecated alias of delegation.token.secret.key."),
	ms("delegation.token.max.lifetime.ms", "604800000", atLeast(1), "Maximum lifetime of a delegation token."),
	tPass("delegation.token.secret.key", "Secret key generating and verifying delegation tokens; unset disables them."),
	ms("delegation.token.expiry.check.interval.ms", "3600000", atLeast(1), "Scan interval removing expired delegation tokens."),
	tPass("password.encoder.old.secret", "Previous secret of dynamically configured passwords, to re-encode them."),
	tPass("password.encoder.secret", "Secret encoding dynamically configured passwords."),
	tStr("password.encoder.cipher.algorithm", "AES/CBC/PKCS5Padding", nil, "Cipher encoding dynamically configured passwords."),
	tInt("password.encoder.iterations", "4096", atLeast(1024), "Iteration count encoding dynamically configured passwords."),
	tInt("password.encoder.key.length", "128", atLeast(8), "Key length encoding dynamically configured passwords."),
	tStr("password.encoder.keyfactory.algorithm", none, nil, "SecretKeyFactory algorithm encoding dynamically configured passwords."),
)
