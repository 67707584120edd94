package polygpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The machine as shared by this user's polygpu processes (option {@code share}, default {@code
 * "node"}; issue 39).
 */
public final class Node {
    private Node() {}

    /**
     * The node's clients and devices now: {@code {"clients": [{"pid", "language", "devices",
     * "inflight", "bytes"}], "devices": [{"device", "inflight", "bytes", "clients"}]}} as maps
     * and lists (numbers are {@code Long}, names {@code String}). Per client (a runtime): the
     * devices it uses ({@code "host:0"}, a GPU's UUID), its unfinished computations and the device
     * bytes it holds; per device the same summed, and the pids of its clients. Clients that died
     * are left out. Needs no runtime.
     *
     * @return the status
     */
    public static Map<String, Object> status() {
        String json = Native.nodeStatus();
        Reader r = new Reader(json);
        Object v = r.value();
        if (!(v instanceof Map))
            throw new IllegalStateException("unreadable node status: " + json);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) v;
        return m;
    }

    /** The library's own JSON: objects, arrays, strings, integers. */
    private static final class Reader {
        private final String s;
        private int i;

        Reader(String s) {
            this.s = s;
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i)))
                i++;
        }

        private char peek() {
            skip();
            if (i >= s.length())
                throw new IllegalStateException("node status ends early: " + s);
            return s.charAt(i);
        }

        private void expect(char c) {
            if (peek() != c)
                throw new IllegalStateException("node status: '" + c + "' expected at " + i);
            i++;
        }

        Object value() {
            char c = peek();
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                if (peek() == '}') {
                    i++;
                    return m;
                }
                for (;;) {
                    String k = string();
                    expect(':');
                    m.put(k, value());
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                if (peek() == ']') {
                    i++;
                    return l;
                }
                for (;;) {
                    l.add(value());
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            if (c == '"')
                return string();
            int start = i;
            if (s.charAt(i) == '-')
                i++;
            while (i < s.length() && Character.isDigit(s.charAt(i)))
                i++;
            return Long.parseLong(s.substring(start, i));
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\') {
                    char e = s.charAt(i++);
                    if (e == 'u') {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    } else {
                        b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e);
                    }
                } else {
                    b.append(c);
                }
            }
            i++;
            return b.toString();
        }
    }
}
