package io.tenantgateway.build;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Enumeration;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Rewrites a jar with its classes' local-variable tables ({@code LocalVariableTable}, {@code LocalVariableTypeTable})
 * left out; everything else, line numbers and source file names included, stays as it was.
 *
 * <p>Why: the agent's class-data archive holds the metadata of every class {@code run} loads, and every page of it is
 * resident (agent/README.md, "Class-data archive"). The tables only serve debuggers; without them each method's
 * metadata is smaller and their names and signatures are no longer symbols to keep. Measured on the runtime jar
 * (BENCHMARKS.md, issue 35): class files 109 → 94 MB, the archive 41.1 → 39.7 MB, the pure tunnel's RSS −1.3 MiB,
 * all parts −4 MiB (their classes are in metaspace). Stack traces keep file and line. The image's Java runtime is
 * stripped the same way, with more ({@code jlink --strip-debug}).
 *
 * <p>A class this ASM cannot read (a class-file version newer than it knows) is kept as it was, and counted.
 * Usage: {@code StripLocalVariables JAR}: the jar is replaced (written next to it, then moved over it).
 */
public final class StripLocalVariables {
    private StripLocalVariables() {
    }

    /** What a rewrite did: classes rewritten, classes kept as they were, and the class bytes before and after. */
    public record Result(int stripped, int kept, long bytesBefore, long bytesAfter) {
        @Override
        public String toString() {
            return String.format("%d classes without local-variable tables, %d kept as they were: %,d -> %,d bytes",
                    stripped, kept, bytesBefore, bytesAfter);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: StripLocalVariables JAR (the jar is rewritten in place)");
            System.exit(2);
        }
        Path jar = Path.of(args[0]);
        if (!Files.isRegularFile(jar)) {
            System.err.println("StripLocalVariables: " + jar + ": no such file (expected: the shaded jar)");
            System.exit(2);
        }
        Path partial = jar.resolveSibling(jar.getFileName() + ".stripping");
        Result result = rewrite(jar, partial);
        Files.move(partial, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.println(jar + ": " + result);
    }

    /** Writes {@code target}: {@code source}'s entries in its order, with the classes' local-variable tables left out. */
    public static Result rewrite(Path source, Path target) throws IOException {
        int stripped = 0;
        int kept = 0;
        long before = 0;
        long after = 0;
        try (ZipFile in = new ZipFile(source.toFile());
                OutputStream file = Files.newOutputStream(target);
                ZipOutputStream out = new ZipOutputStream(file)) {
            Enumeration<? extends ZipEntry> entries = in.entries();
            while (entries.hasMoreElements()) {
                ZipEntry entry = entries.nextElement();
                byte[] bytes;
                try (InputStream stream = in.getInputStream(entry)) {
                    bytes = stream.readAllBytes();
                }
                if (isClass(entry)) {
                    before += bytes.length;
                    byte[] rewritten = strip(bytes);
                    if (rewritten == null) {
                        kept++;
                    } else {
                        stripped++;
                        bytes = rewritten;
                    }
                    after += bytes.length;
                }
                ZipEntry copy = new ZipEntry(entry.getName());
                copy.setTime(entry.getTime());
                out.putNextEntry(copy);
                out.write(bytes);
                out.closeEntry();
            }
        }
        return new Result(stripped, kept, before, after);
    }

    private static boolean isClass(ZipEntry entry) {
        String name = entry.getName();
        return !entry.isDirectory() && name.endsWith(".class") && !name.endsWith("module-info.class");
    }

    /** The class without its local-variable tables, or null where this ASM cannot read it. */
    static byte[] strip(byte[] classFile) {
        ClassReader reader;
        try {
            reader = new ClassReader(classFile);
        } catch (IllegalArgumentException e) {
            return null; // a class-file version this ASM does not know yet
        }
        // No reader given to the writer: it builds a new constant pool, so the tables' names and signatures go too.
        ClassWriter writer = new ClassWriter(0);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                return new MethodVisitor(Opcodes.ASM9, super.visitMethod(access, name, descriptor, signature,
                        exceptions)) {
                    @Override
                    public void visitLocalVariable(String variable, String variableDescriptor,
                            String variableSignature, Label start, Label end, int index) {
                        // left out
                    }
                };
            }
        }, 0);
        return writer.toByteArray();
    }
}
