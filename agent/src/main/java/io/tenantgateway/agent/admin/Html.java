package io.tenantgateway.agent.admin;

/**
 * HTML escaping for the status page. Every piece of text on the page passes through {@link #text}: tunnel
 * addresses come from DIAL_REQs, admission messages and lock values from the API — none of it is trusted.
 */
final class Html {
    private Html() {
    }

    /** Escapes for element content and double- or single-quoted attribute values; {@code null} becomes "". */
    static String text(Object value) {
        if (value == null) {
            return "";
        }
        String s = value.toString();
        StringBuilder out = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> {
                    if (c < 0x20 && c != '\n' && c != '\t') {
                        out.append("&#xfffd;"); // control characters have no business on the page
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
