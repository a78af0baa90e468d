package io.tenantgateway.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

class StripLocalVariablesTest {
    private static final String SOURCE = """
            package sample;

            public class Greeter {
                public static String greet(String name) {
                    String greeting = "hello, " + name;
                    java.util.List<String> words = java.util.List.of(greeting);
                    if (name.isEmpty()) {
                        throw new IllegalArgumentException("no name");
                    }
                    return words.get(0);
                }
            }
            """;

    @TempDir
    Path dir;

    @Test
    void leavesOutTheLocalVariableTablesAndKeepsLineNumbersEntriesAndOrder() throws Exception {
        byte[] compiled = compileWithDebugInfo();
        byte[] unknownVersion = compiled.clone();
        unknownVersion[6] = 0;
        unknownVersion[7] = 99; // a class-file version no ASM knows
        Path jar = dir.resolve("in.jar");
        writeJar(jar, List.of(
                new Entry("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n".getBytes(StandardCharsets.UTF_8)),
                new Entry("sample/Greeter.class", compiled),
                new Entry("sample/greeting.txt", "hello".getBytes(StandardCharsets.UTF_8)),
                new Entry("META-INF/versions/99/sample/Greeter.class", unknownVersion)));
        assertThat(attributes(compiled)).containsEntry("local variables", 3).containsKey("line numbers");

        Path out = dir.resolve("out.jar");
        StripLocalVariables.Result result = StripLocalVariables.rewrite(jar, out);

        assertThat(result.stripped()).isEqualTo(1);
        assertThat(result.kept()).isEqualTo(1);
        assertThat(result.bytesAfter()).isLessThan(result.bytesBefore());
        try (ZipFile stripped = new ZipFile(out.toFile())) {
            assertThat(Collections.list(stripped.entries()).stream().map(ZipEntry::getName)).containsExactly(
                    "META-INF/MANIFEST.MF", "sample/Greeter.class", "sample/greeting.txt",
                    "META-INF/versions/99/sample/Greeter.class");
            byte[] greeter = read(stripped, "sample/Greeter.class");
            assertThat(attributes(greeter)).doesNotContainKey("local variables")
                    .containsEntry("line numbers", attributes(compiled).get("line numbers"));
            assertThat(read(stripped, "sample/greeting.txt")).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
            assertThat(read(stripped, "META-INF/versions/99/sample/Greeter.class")).isEqualTo(unknownVersion);
        }

        // The stripped class runs, and its stack traces still name file and line.
        try (URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, null)) {
            Class<?> greeter = loader.loadClass("sample.Greeter");
            assertThat(greeter.getMethod("greet", String.class).invoke(null, "node-1")).isEqualTo("hello, node-1");
            try {
                greeter.getMethod("greet", String.class).invoke(null, "");
                throw new AssertionError("expected the sample to throw");
            } catch (InvocationTargetException e) {
                StackTraceElement top = e.getCause().getStackTrace()[0];
                assertThat(top.getFileName()).isEqualTo("Greeter.java");
                assertThat(top.getLineNumber()).isEqualTo(8);
            }
        }
    }

    private byte[] compileWithDebugInfo() throws IOException {
        Path source = dir.resolve("src/sample/Greeter.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, SOURCE);
        Path classes = dir.resolve("classes");
        Files.createDirectories(classes);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int status = javac.run(null, null, null, "-g", "-d", classes.toString(), source.toString());
        assertThat(status).as("javac exit status").isZero();
        return Files.readAllBytes(classes.resolve("sample/Greeter.class"));
    }

    /** How many local-variable entries and line numbers the class's methods have. */
    private static Map<String, Integer> attributes(byte[] classFile) {
        Map<String, Integer> counts = new TreeMap<>();
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitLocalVariable(String variable, String variableDescriptor,
                            String variableSignature, Label start, Label end, int index) {
                        if (name.equals("greet")) {
                            counts.merge("local variables", 1, Integer::sum);
                        }
                    }

                    @Override
                    public void visitLineNumber(int line, Label start) {
                        counts.merge("line numbers", 1, Integer::sum);
                    }
                };
            }
        }, 0);
        return counts;
    }

    private record Entry(String name, byte[] bytes) {
    }

    private static void writeJar(Path jar, List<Entry> entries) throws IOException {
        try (OutputStream file = Files.newOutputStream(jar); ZipOutputStream out = new ZipOutputStream(file)) {
            for (Entry entry : new ArrayList<>(entries)) {
                out.putNextEntry(new ZipEntry(entry.name()));
                out.write(entry.bytes());
                out.closeEntry();
            }
        }
    }

    private static byte[] read(ZipFile zip, String name) throws IOException {
        try (InputStream in = zip.getInputStream(zip.getEntry(name))) {
            return in.readAllBytes();
        }
    }
}
