package io.sparklance.core.encoding;

/** An encoding this reader does not implement; the reader names the file, column and page around it. */
public final class UnsupportedEncodingException extends RuntimeException {
  public final String encoding;

  public UnsupportedEncodingException(String encoding, String where) {
    super("encoding `" + encoding + "`" + (where.isEmpty() ? "" : " " + where));
    this.encoding = encoding;
  }
}
