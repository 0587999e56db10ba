package adminuser.service;

import adminuser.dto.UserDto;
import adminuser.entity.User;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestTemplate;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

@Service
public class AdminUserServiceImpl implements AdminUserService {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminUserServiceImpl.class);

    private static final String USER_SERVICE_IP_URI = "http://ts-user-service:12342/api/v1/userservice/users";

    private static final Pattern USER_NAME = Pattern.compile("^[A-Za-z0-9_]{3,30}$");
    private static final Pattern EMAIL = Pattern.compile("^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$");
    private static final int MIN_PASSWORD_LENGTH = 6;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getAllUsers(HttpHeaders headers) {
        HttpEntity requestEntity = new HttpEntity(null, headers);
        ResponseEntity<Response<List<User>>> re = restTemplate.exchange(
                USER_SERVICE_IP_URI,
                HttpMethod.GET,
                requestEntity,
                new ParameterizedTypeReference<Response<List<User>>>() {
                });
        Response<List<User>> result = re.getBody();
        if (result == null || result.getData() == null) {
            return new Response<>(0, "No users", null);
        }
        // never ship password hashes to the admin UI
        List<User> masked = result.getData().stream()
                .peek(u -> u.setPassword(null))
                .collect(Collectors.toList());
        return new Response<>(1, "Success", masked);
    }

    @Override
    public Response addUser(UserDto userDto, HttpHeaders headers) {
        String problem = checkUser(userDto);
        if (problem != null) {
            LOGGER.warn("[addUser] {}: {}", userDto.getUserName(), problem);
            return new Response<>(0, problem, null);
        }
        HttpEntity<UserDto> requestEntity = new HttpEntity<>(userDto, headers);
        ResponseEntity<Response<User>> re = restTemplate.exchange(
                USER_SERVICE_IP_URI + "/register",
                HttpMethod.POST,
                requestEntity,
                new ParameterizedTypeReference<Response<User>>() {
                });
        return re.getBody();
    }

    String checkUser(UserDto userDto) {
        if (userDto.getUserName() == null || !USER_NAME.matcher(userDto.getUserName()).matches()) {
            return "User name must be 3-30 letters, digits or underscores";
        }
        if (userDto.getPassword() == null || userDto.getPassword().length() < MIN_PASSWORD_LENGTH) {
            return "Password shorter than " + MIN_PASSWORD_LENGTH + " characters";
        }
        if (userDto.getEmail() != null && !EMAIL.matcher(userDto.getEmail()).matches()) {
            return "Malformed email address";
        }
        // gender: 0 unknown, 1 male, 2 female, 3 other
        if (userDto.getGender() < 0 || userDto.getGender() > 3) {
            return "Unknown gender code " + userDto.getGender();
        }
        // document type: 1 ID card, 2 passport, 3 other
        if (userDto.getDocumentType() < 1 || userDto.getDocumentType() > 3) {
            return "Unknown document type " + userDto.getDocumentType();
        }
        return null;
    }
}
