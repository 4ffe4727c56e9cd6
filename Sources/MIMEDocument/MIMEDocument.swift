// The MIMEDocument module.
