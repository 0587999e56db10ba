package notification.service;

import freemarker.template.Configuration;
import freemarker.template.Template;
import notification.entity.Mail;
import notification.entity.NotifyInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpHeaders;
import org.springframework.mail.MailException;
import org.springframework.mail.javamail.JavaMailSender;
import org.springframework.mail.javamail.MimeMessageHelper;
import org.springframework.stereotype.Service;
import org.springframework.ui.freemarker.FreeMarkerTemplateUtils;

import javax.mail.internet.MimeMessage;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Renders a FreeMarker template per event and hands the mail to the SMTP server in
 * application.yml. Returns false (never throws) when the mail cannot be sent.
 */
@Service
public class MailServiceImpl implements NotificationService {

    private static final Logger LOGGER = LoggerFactory.getLogger(MailServiceImpl.class);

    private static final Pattern EMAIL = Pattern.compile("^[^@\\s]+@[^@\\s]+\\.[A-Za-z]{2,}$");

    @Autowired
    private JavaMailSender mailSender;

    @Autowired
    private Configuration freemarkerConfig;

    @Value("${spring.mail.username}")
    private String sender;

    @Override
    public boolean preserveSuccess(NotifyInfo info, HttpHeaders headers) {
        return send(info, "Your ticket is booked", "preserve_success.ftl");
    }

    @Override
    public boolean orderCreateSuccess(NotifyInfo info, HttpHeaders headers) {
        return send(info, "Your order is created", "order_create_success.ftl");
    }

    @Override
    public boolean orderChangedSuccess(NotifyInfo info, HttpHeaders headers) {
        return send(info, "Your ticket was changed", "order_changed_success.ftl");
    }

    @Override
    public boolean orderCancelSuccess(NotifyInfo info, HttpHeaders headers) {
        return send(info, "Your order is cancelled", "order_cancel_success.ftl");
    }

    private boolean send(NotifyInfo info, String subject, String templateName) {
        if (info.getEmail() == null || !EMAIL.matcher(info.getEmail()).matches()) {
            LOGGER.warn("[send] no valid address for order {}", info.getOrderNumber());
            return false;
        }
        Map<String, Object> model = new HashMap<>();
        model.put("username", info.getUsername());
        model.put("startingPlace", info.getStartingPlace());
        model.put("endPlace", info.getEndPlace());
        model.put("startingTime", info.getStartingTime());
        model.put("date", info.getDate());
        model.put("seatClass", info.getSeatClass());
        model.put("seatNumber", info.getSeatNumber());
        model.put("price", info.getPrice());

        Mail mail = new Mail();
        mail.setMailFrom(sender);
        mail.setMailTo(info.getEmail());
        mail.setMailSubject(subject);
        mail.setModel(model);
        try {
            Template template = freemarkerConfig.getTemplate(templateName);
            String html = FreeMarkerTemplateUtils.processTemplateIntoString(template, model);
            MimeMessage message = mailSender.createMimeMessage();
            MimeMessageHelper helper = new MimeMessageHelper(message, true, "UTF-8");
            helper.setFrom(mail.getMailFrom());
            helper.setTo(mail.getMailTo());
            helper.setSubject(mail.getMailSubject());
            helper.setText(html, true);
            mailSender.send(message);
            return true;
        } catch (MailException e) {
            LOGGER.error("[send] SMTP refused mail for order {}: {}", info.getOrderNumber(), e.getMessage());
            return false;
        } catch (Exception e) {
            LOGGER.error("[send] template {} failed: {}", templateName, e.getMessage());
            return false;
        }
    }
}
