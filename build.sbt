// sparklance build: jvm/core (the Lance format, no Spark), jvm/spark (the connector), one runtime jar per Spark line.
//
// The format core is built for Scala 2.13 and 2.12 (core, core212) from one source tree. The connector is built once
// per Spark line (spark43, spark35_212, ...: see `sparkLines`) from jvm/spark/src/main plus the shim directories
// that line lists (docs/dev/spark-lines.md). Spark is `provided`. Spark 4.3's jars come from the pinned pyspark
// wheel in .venv (4.3.0 is not on Maven Central), the other lines' from Maven Central; set SPARK_JARS to compile the
// 4.3 line against another distribution's jars directory.
import sbtassembly.AssemblyPlugin.autoImport._

val protobufVersion = "4.33.5"
val scalatestVersion = "3.2.19"
// Lucene's analysis-common publishes Snowball's Java stemmers (org.tartarus.snowball, Snowball 2.x). The core stems
// Arabic, Hungarian, Portuguese, Russian, Tamil and Turkish with them (their output equals pylance 14's Snowball
// 3.1.1 there; FtsStemmer); English is the core's own. The runtime jars carry only those Snowball classes, shaded
// (SnowballClasses), no Lucene: Lucene 9.12 is the last line that runs on Java 11 and 17. The bench uses all of it.
val luceneVersion = "9.12.3"
val snowball = ("org.apache.lucene" % "lucene-analysis-common" % luceneVersion).exclude("org.apache.lucene", "lucene-core")

/** The Snowball classes the runtime jars keep of lucene-analysis-common: the runtime and FtsStemmer's languages. */
val SnowballClasses: Set[String] = Set("Among", "SnowballProgram", "SnowballStemmer").map(c => s"snowball/$c.class") ++
  Set("Arabic", "Hungarian", "Portuguese", "Russian", "Tamil", "Turkish").map(l => s"snowball/ext/${l}Stemmer.class")

/** Whether a runtime jar keeps `path`: anything but a Snowball class outside [[SnowballClasses]] (shaded or not). */
def keptSnowball(path: String): Boolean = {
  val p = path.replace('\\', '/')
  val snowballClass = p.startsWith("org/tartarus/") || p.startsWith("io/sparklance/shaded/snowball/")
  !snowballClass || SnowballClasses.exists(c => p.endsWith("/" + c) || p == c)
}

// S3 through Hadoop's S3A, at the Hadoop version Spark 4.3 ships, and the AWS SDK version that hadoop-aws 3.5.0 was
// built against. hadoop-aws declares the whole SDK as one 690 MB `bundle` jar; S3A needs only the S3 client, its
// transfer manager and STS (assumed-role credentials), and the external manifest store needs DynamoDB's client.
// All are `provided`: users add hadoop-aws (e.g. `--packages org.apache.hadoop:hadoop-aws:3.5.0`) as for any S3A job.
val hadoopVersion = "3.5.0"
val awsSdkVersion = "2.35.4"
val awsDeps = Seq(
  ("org.apache.hadoop" % "hadoop-aws" % hadoopVersion).exclude("software.amazon.awssdk", "bundle"),
  "software.amazon.awssdk" % "s3" % awsSdkVersion,
  "software.amazon.awssdk" % "s3-transfer-manager" % awsSdkVersion,
  "software.amazon.awssdk" % "sts" % awsSdkVersion,
  "software.amazon.awssdk" % "dynamodb" % awsSdkVersion,
)

ThisBuild / organization := "io.sparklance"
ThisBuild / version := IO.read(file("VERSION")).trim

ThisBuild / scalaVersion := SparkLine.scala213
// Warnings are errors, in Scala and Java; on 2.13, -Xsource:3 keeps the code ready for Scala 3's syntax and rules.
// Scala 2.12 spells the options differently and has no byname-implicit lint.
// Scala 2.12 builds (Spark 3.4, 3.5) target Java 11, which those Sparks also run on; everything else Java 17.
def javaRelease(scalaV: String): String = if (scalaV.startsWith("2.12.")) "11" else "17"
def javacFlags(scalaV: String): Seq[String] = Seq("--release", javaRelease(scalaV), "-Xlint:unchecked", "-Werror")
def scalacFlags(scalaV: String): Seq[String] = Seq("-release", javaRelease(scalaV), "-deprecation", "-feature", "-unchecked") ++ (
  if (scalaV.startsWith("2.12.")) Seq("-Xlint:_", "-Xfatal-warnings")
  else Seq("-Xlint:-byname-implicit,_", "-Werror", "-Xsource:3"))

lazy val sparkJarsDir: File = {
  val fromEnv = sys.env.get("SPARK_JARS").map(file(_).getAbsoluteFile)
  val fromVenv = Option((file(".venv").getAbsoluteFile / "lib").listFiles()).toSeq.flatten
    .map(_ / "site-packages" / "pyspark" / "jars").find(_.isDirectory)
  fromEnv.orElse(fromVenv).getOrElse(sys.error(
    "Cannot find Spark's jars: run `make venv` (it installs the pinned pyspark into .venv) or set SPARK_JARS."))
}

/** The Spark distribution's jars, minus the Scala library that sbt itself provides at the same version. */
def sparkJars(keep: String => Boolean): Seq[File] =
  (sparkJarsDir ** "*.jar").get.filter(f => keep(f.getName) && !f.getName.startsWith("scala-"))

// What the format core may see of Spark's distribution: the libraries the design allows, never Spark itself.
val coreJarPrefixes = Seq("arrow-", "flatbuffers-java", "RoaringBitmap", "hadoop-client-", "zstd-jni", "lz4-java",
  "slf4j-api", "jackson-core", "jackson-databind", "jackson-annotations", "netty-buffer", "netty-common",
  "commons-lang3", "log4j-")

// Spark 4 on Java 17 needs these opens (the same list Spark's launcher passes).
val javaModuleOpens = Seq("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
  "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
  "sun.util.calendar").map(p => s"--add-opens=java.base/$p=ALL-UNNAMED")

lazy val commonSettings = Seq(
  scalacOptions ++= scalacFlags(scalaVersion.value),
  javacOptions ++= javacFlags(scalaVersion.value),
  Test / fork := true,
  Test / javaOptions ++= javaModuleOpens ++ Seq("-Xmx3g", "-Dio.netty.tryReflectionSetAccessible=true"),
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
  libraryDependencies += "org.scalatest" %% "scalatest" % scalatestVersion % Test,
)

// The core's sources and protobuf messages, for each Scala version it is built for.
lazy val coreSettings = commonSettings ++ Seq(
  name := "sparklance-core",
  libraryDependencies += "com.google.protobuf" % "protobuf-java" % protobufVersion,
  libraryDependencies += snowball,
  libraryDependencies ++= awsDeps.map(_ % Provided),
  libraryDependencies += "com.google.protobuf" % "protobuf-java" % protobufVersion % "protobuf",
  PB.protocVersion := protobufVersion,
  Compile / PB.protoSources := Seq((ThisBuild / baseDirectory).value / "protos"),
  Compile / PB.targets := Seq(PB.gens.java -> (Compile / sourceManaged).value / "protobuf"),
)

lazy val core = (project in file("jvm/core"))
  .settings(coreSettings)
  .settings(Compile / unmanagedJars ++= sparkJars(n => coreJarPrefixes.exists(n.startsWith)).classpath)

// The core's float kernels through the Vector API (jdk.incubator.vector), compiled apart from the core: javac needs
// `--add-modules jdk.incubator.vector` for them and then always warns that the module incubates (no -Xlint option
// turns that off, so no -Werror here), and sbt's incremental compiler cannot analyse the classes (it loads them in
// sbt's own JVM, which has no such module). So this task runs javac itself, and its classes join the project's as
// resources. The core loads the class by name where the JVM has the module (FloatKernels); the Java 17 (Scala 2.13)
// connector jars carry it, the Scala 2.12 ones do not.
lazy val compileVectorKernels = Def.task {
  val out = (Compile / resourceManaged).value
  val sources = ((Compile / javaSource).value ** "*.java").get
  val classpath = (core / Compile / fullClasspath).value.map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
  IO.delete(out)
  IO.createDirectory(out)
  val javac = javax.tools.ToolProvider.getSystemJavaCompiler
  val args = Seq("--release", "17", "--add-modules", "jdk.incubator.vector", "-Xlint:unchecked", "-cp", classpath,
    "-d", out.getAbsolutePath) ++ sources.map(_.getAbsolutePath)
  val log = streams.value.log
  val errors = new java.io.ByteArrayOutputStream()
  if (javac.run(null, null, errors, args: _*) != 0) sys.error(s"javac failed on the Vector API kernels:\n$errors")
  errors.toString.linesIterator.foreach(l => log.info(l))
  (out ** "*.class").get
}

lazy val coreVector = (project in file("jvm/core-vector"))
  .dependsOn(core % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "sparklance-core-vector",
    Compile / unmanagedSourceDirectories := Nil,
    Compile / resourceGenerators += compileVectorKernels.taskValue,
    Test / javaOptions += "--add-modules=jdk.incubator.vector",
  )

// The same sources for Scala 2.12 (Spark 3.4 and 3.5), compiled against the oldest library versions a supported
// Spark line ships (3.4's), so that the core calls nothing newer than every line has. Its tests run on 2.13 only.
lazy val core212 = (project in file("jvm/core"))
  .settings(coreSettings)
  .settings(
    scalaVersion := SparkLine.scala212,
    target := baseDirectory.value / "target" / "scala-2.12-build",
    Test / sources := Nil,
    libraryDependencies ++= Seq(
      "org.apache.arrow" % "arrow-vector" % "11.0.0",
      "org.apache.arrow" % "arrow-memory-core" % "11.0.0",
      "org.roaringbitmap" % "RoaringBitmap" % "0.9.38",
      "com.github.luben" % "zstd-jni" % "1.5.2-5",
      "org.lz4" % "lz4-java" % "1.8.0",
      "com.fasterxml.jackson.core" % "jackson-databind" % "2.14.2",
      "org.apache.hadoop" % "hadoop-client-api" % "3.3.4",
      "org.slf4j" % "slf4j-api" % "2.0.6",
      // scala.jdk.CollectionConverters on 2.12; Spark 3.4 and 3.5 ship this version.
      "org.scala-lang.modules" %% "scala-collection-compat" % "2.7.0",
    ).map(_ % Provided),
  )

def sparkLineSettings(l: SparkLine) = commonSettings ++ Seq(
  name := l.artifact,
  scalaVersion := l.scalaV,
  Compile / unmanagedSourceDirectories ++= l.shims.map(r => baseDirectory.value / "src" / "main" / s"scala-spark-$r"),
  // Every line's jar goes to build/jars/, where the Python package, the wheel and `make publish-local` find them.
  assembly / assemblyOutputPath := (ThisBuild / baseDirectory).value / "build" / "jars" / s"${l.artifact}-${version.value}.jar",
  assembly / assemblyShadeRules := Seq(
    ShadeRule.rename("com.google.protobuf.**" -> "io.sparklance.shaded.protobuf.@1").inAll,
    ShadeRule.rename("org.tartarus.snowball.**" -> "io.sparklance.shaded.snowball.@1").inAll),
  assembly / assemblyOption ~= (_.withIncludeScala(false)),
  // Spark's own jars are provided by the cluster; the runtime jar carries only sparklance, protobuf and the Snowball
  // stemmers (SnowballClasses; the jars of .venv's Spark reach other lines' classpaths through the 2.13 core, which
  // is compiled against them).
  assembly / assemblyExcludedJars := {
    val spark = sparkJarsDir.getAbsolutePath + java.io.File.separator
    (assembly / fullClasspath).value.filter(_.data.getAbsolutePath.startsWith(spark))
  },
  assembly / assemblyMergeStrategy := {
    case PathList("org", "apache", "lucene", _*) => MergeStrategy.discard
    case PathList("META-INF", "services", s) if s.startsWith("org.apache.lucene") => MergeStrategy.discard
    case p if !keptSnowball(p) => MergeStrategy.discard
    case PathList("META-INF", "services", _*) => MergeStrategy.concat
    case PathList("META-INF", _*) => MergeStrategy.discard
    case "module-info.class" => MergeStrategy.discard
    case _ => MergeStrategy.first
  },
)

// Spark 4.3, the line the whole test suite runs on: compiled against (and tested with) the jars of .venv's pyspark.
lazy val spark = (project in file("jvm/spark"))
  .dependsOn(core % "compile->compile;test->test", coreVector)
  .settings(sparkLineSettings(SparkLine("spark43")))
  .settings(
    Compile / unmanagedJars ++= sparkJars(_ => true).classpath,
  )

// The other lines: compiled against that Spark from Maven Central; the same main sources, no JVM tests of their own
// (the cross-version pytest suite runs their jars on a real Spark of the line: make test-lines, make test-all-sparks).
def otherLine(id: String): Project = {
  val l = SparkLine(id)
  Project(id, file("jvm/spark"))
    .dependsOn(if (l.scalaBinary == "2.12") core212 else core)
    .dependsOn((if (l.scalaBinary == "2.12") Nil else Seq[ClasspathDep[ProjectReference]](coreVector)): _*)
    .settings(sparkLineSettings(l))
    .settings(
      target := baseDirectory.value / "target" / s"spark-${l.line}_${l.scalaBinary}",
      Test / sources := Nil,
      libraryDependencies += "org.apache.spark" %% "spark-sql" % l.spark % Provided,
      // Only this line's Spark and libraries: not the Spark 4.3 jars the 2.13 core is compiled with.
      Compile / unmanagedClasspath := Nil,
    )
}

lazy val spark34_212 = otherLine("spark34_212")
lazy val spark34_213 = otherLine("spark34_213")
lazy val spark35_212 = otherLine("spark35_212")
lazy val spark35_213 = otherLine("spark35_213")
lazy val spark40 = otherLine("spark40")
lazy val spark41 = otherLine("spark41")
lazy val spark42 = otherLine("spark42")

// Spark 3.4 and 3.5 with Scala 2.13 are not on PyPI (their pyspark packages hold the 2.12 build): for
// `make test-all-sparks`, their jars come from Maven Central and make a SPARK_HOME (build/spark-homes/<line>_2.13).
def sparkHome(id: String, spark: String): Project = Project(id, file(s"build/spark-homes/$id"))
  .settings(
    publish / skip := true,
    // The Scala library those Spark releases ship, so that the tests run the jars on it.
    scalaVersion := "2.13.8",
    dependencyOverrides += "org.scala-lang" % "scala-library" % "2.13.8",
    libraryDependencies += "org.apache.spark" %% "spark-sql" % spark,
  )
lazy val sparkhome34_213 = sparkHome("sparkhome34_213", "3.4.3")
lazy val sparkhome35_213 = sparkHome("sparkhome35_213", "3.5.9")

// Benchmarks (make bench): separate from tests and from the runtime jar.
lazy val bench = (project in file("jvm/bench"))
  .dependsOn(core, coreVector)
  .settings(
    name := "sparklance-bench",
    publish / skip := true,
    libraryDependencies += "org.apache.lucene" % "lucene-analysis-common" % luceneVersion,
    scalacOptions ++= scalacFlags(scalaVersion.value),
    javacOptions ++= javacFlags(scalaVersion.value),
    Compile / unmanagedJars ++= sparkJars(n => coreJarPrefixes.exists(n.startsWith)).classpath,
    run / fork := true,
    run / javaOptions ++= javaModuleOpens ++ Seq("-Xmx6g", "-Xss4m", "--add-modules=jdk.incubator.vector"),
  )

// The S3 jars alone, for tests and the demo that run Spark against an S3 stand-in (make s3-jars exports this
// project's classpath to build/s3-classpath.txt). Nothing of it goes into the runtime jar.
lazy val s3deps = (project in file("jvm/s3deps"))
  .settings(
    name := "sparklance-s3deps",
    publish / skip := true,
    libraryDependencies ++= awsDeps,
  )

lazy val root = (project in file("."))
  .aggregate(core, coreVector, spark, bench)
  .settings(name := "sparklance", publish / skip := true)
