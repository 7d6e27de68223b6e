package io.sparklance.core.encoding;

/**
 * A decoding failure inside a page: the reader catches it and rethrows it as a corrupt-file error naming the file,
 * column, page and encoding, which only the reader knows.
 */
public final class EncodingException extends RuntimeException {
  public EncodingException(String message) {
    super(message);
  }
}
