// sparklance build: jvm/core (the Lance format, no Spark), jvm/spark (the connector), one assembled runtime jar.
//
// Spark is `provided` and is taken from the jars of the pinned pyspark wheel in .venv (the Makefile creates it):
// pyspark 4.3.0 ships exactly the Spark, Arrow, Hadoop, RoaringBitmap, zstd-jni and lz4-java jars that the
// connector runs against, and Spark 4.3.0 is not published on the Maven repository this project can reach.
// Set SPARK_JARS to point at another Spark distribution's jars directory.
import sbtassembly.AssemblyPlugin.autoImport._

val protobufVersion = "4.33.5"
val scalatestVersion = "3.2.19"

ThisBuild / organization := "io.sparklance"
ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / scalaVersion := "2.13.18"
ThisBuild / javacOptions ++= Seq("--release", "17", "-Xlint:unchecked")
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-byname-implicit,_")

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
  Test / fork := true,
  Test / javaOptions ++= javaModuleOpens ++ Seq("-Xmx3g", "-Dio.netty.tryReflectionSetAccessible=true"),
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
  libraryDependencies += "org.scalatest" %% "scalatest" % scalatestVersion % Test,
)

lazy val core = (project in file("jvm/core"))
  .settings(commonSettings)
  .settings(
    name := "sparklance-core",
    Compile / unmanagedJars ++= sparkJars(n => coreJarPrefixes.exists(n.startsWith)).classpath,
    libraryDependencies += "com.google.protobuf" % "protobuf-java" % protobufVersion,
    libraryDependencies += "com.google.protobuf" % "protobuf-java" % protobufVersion % "protobuf",
    PB.protocVersion := protobufVersion,
    Compile / PB.protoSources := Seq((ThisBuild / baseDirectory).value / "protos"),
    Compile / PB.targets := Seq(PB.gens.java -> (Compile / sourceManaged).value / "protobuf"),
  )

lazy val spark = (project in file("jvm/spark"))
  .dependsOn(core % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "sparklance-spark",
    Compile / unmanagedJars ++= sparkJars(_ => true).classpath,
    assembly / assemblyJarName := s"sparklance-${version.value}.jar",
    assembly / assemblyShadeRules := Seq(
      ShadeRule.rename("com.google.protobuf.**" -> "io.sparklance.shaded.protobuf.@1").inAll),
    // Spark's own jars are provided by the cluster; the runtime jar carries only sparklance and protobuf.
    assembly / assemblyExcludedJars := {
      val spark = sparkJarsDir.getAbsolutePath + java.io.File.separator
      (assembly / fullClasspath).value.filter(_.data.getAbsolutePath.startsWith(spark))
    },
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", _*) => MergeStrategy.discard
      case "module-info.class" => MergeStrategy.discard
      case _ => MergeStrategy.first
    },
  )

// Benchmarks (make bench): separate from tests and from the runtime jar.
lazy val bench = (project in file("jvm/bench"))
  .dependsOn(core)
  .settings(
    name := "sparklance-bench",
    publish / skip := true,
    Compile / unmanagedJars ++= sparkJars(n => coreJarPrefixes.exists(n.startsWith)).classpath,
    run / fork := true,
    run / javaOptions ++= javaModuleOpens ++ Seq("-Xmx6g", "-Xss4m"),
  )

lazy val root = (project in file("."))
  .aggregate(core, spark, bench)
  .settings(name := "sparklance", publish / skip := true)
