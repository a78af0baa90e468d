package io.tenantgateway.certs;

/** Whether a TLS server asks for, or insists on, a client certificate. */
public enum ClientAuthMode { NONE, OPTIONAL, REQUIRE }
